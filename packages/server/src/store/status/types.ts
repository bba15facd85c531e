/** Status history tables as stored (times ISO 8601 UTC text; `up` 0/1). */
export interface StatusSampleTable {
  sport: string;
  /** Start of the sampled minute. */
  minute: string;
  up: number;
  live_games: number;
  events_5m: number;
}

export interface StatusDayTable {
  sport: string;
  /** YYYY-MM-DD (UTC). */
  date: string;
  sampled: number;
  up: number;
  /** The day's earliest sampled minute: coverage of the first monitored day starts there. */
  first_minute: string;
  /** The day's latest sampled minute: tells whether the current minute is in yet. */
  last_minute: string;
}

export interface StatusIncidentTable {
  id: string;
  /** `sport:<sport>` or `channel:<channel>`; one open incident per subject. */
  subject: string;
  sport: string | null;
  channel: string | null;
  title: string;
  started_at: string;
  resolved_at: string | null;
}

export interface StatusDatabase {
  status_samples: StatusSampleTable;
  status_days: StatusDayTable;
  status_incidents: StatusIncidentTable;
}
