"""Backtest a strategy on a past season, through the very handler a live stream would feed.

    SVC_API_KEY=svc_test_... python3 examples/backtest.py --league wc --season 2022
    SVC_API_KEY=svc_test_... python3 examples/backtest.py --live --sport soccer   # the same handler, live

No pandas: the export is an iterator of typed events, replayed in order.
"""
from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Dict, Iterable, Tuple

from svc_client import Svc
from svc_client.types import StreamEvent


class LeadChangeCounter:
    """The strategy: count goals per game and note each time the lead changes hands.

    It reads only the stream's fields (a REST/export event has all of them), so the same
    object handles a live stream and an archive replay.
    """

    def __init__(self) -> None:
        self.score: Dict[str, Dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.leader: Dict[str, str] = {}
        self.lead_changes = 0
        self.events = 0

    def handle(self, event: StreamEvent) -> None:
        if event["type"] != "score" or event["tier"] != "confirmed":
            return  # provisional scores, retractions and kinds we do not know
        self.events += 1
        game = self.score[event["game_id"]]
        game[event["team"]] += event["points"]
        ranked = sorted(game.items(), key=lambda kv: kv[1], reverse=True)
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            if self.leader.get(event["game_id"], ranked[0][0]) != ranked[0][0]:
                self.lead_changes += 1
            self.leader[event["game_id"]] = ranked[0][0]

    def top_scorers(self, n: int = 3) -> Iterable[Tuple[str, int]]:
        totals: Dict[str, int] = defaultdict(int)
        for game in self.score.values():
            for team, goals in game.items():
                totals[team] += goals
        return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--league", default="wc")
    parser.add_argument("--season", default="2022")
    parser.add_argument("--live", action="store_true", help="feed the live stream instead of the archive")
    parser.add_argument("--sport", default="soccer")
    args = parser.parse_args()

    strategy = LeadChangeCounter()
    with Svc() as svc:  # SVC_API_KEY, SVC_BASE_URL
        if args.live:
            with svc.stream(sport=args.sport, tier="confirmed") as events:
                for event in events:
                    strategy.handle(event)
                    print(event["game_id"], event["team"], event["points"], "lead changes so far:", strategy.lead_changes)
        else:
            for event in svc.export(league=args.league, season=args.season):
                strategy.handle(event)
    print(f"{args.league} {args.season}: {strategy.events} goals in {len(strategy.score)} games, {strategy.lead_changes} lead changes")
    for team, goals in strategy.top_scorers():
        print(f"  {team} {goals}")


if __name__ == "__main__":
    main()
