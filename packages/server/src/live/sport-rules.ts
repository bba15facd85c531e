/** Points one scoring event can be worth, per sport. */
const POINTS: Record<string, readonly number[]> = {
  soccer: [1],
  basketball: [1, 2, 3],
};

export function pointsAllowed(sport: string, points: number): boolean {
  return POINTS[sport]?.includes(points) ?? false;
}
