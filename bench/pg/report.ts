/**
 * What `npm run bench:pg` prints: each contender's cost per turn (the median of its rounds),
 * and the ratios its targets are judged on. Pure: figures in, lines out.
 */

export const PG_CONTENDERS = ['floor', 'floorCommits', 'ours', 'dbos', 'dbosPoints'] as const;
export type PgContender = (typeof PG_CONTENDERS)[number];

export const PG_CONTENDER_LABELS: Record<PgContender, string> = {
  floor: 'floor: INSERT + COMMIT',
  floorCommits: 'floor, our commits',
  ours: 'ours: PgRunStore',
  dbos: 'DBOS: a step a turn',
  dbosPoints: 'DBOS: a step a point',
};

/** One run of one contender, over the whole run. */
export interface PgSample {
  ms: number;
  /** CPU time of the bench's process (user + system): the client's side, the contender's own code and its driver. */
  cpuMs: number;
  /** Statements the server executed (pg_stat_statements' calls): each a round trip, node-postgres does not pipeline. */
  statements: number;
  /** WAL the run made (pg_current_wal_insert_lsn before and after). */
  walBytes: number;
}

export interface PgFigures {
  contender: PgContender;
  /** Per turn, the median over the rounds. */
  ms: number;
  cpuMs: number;
  statements: number;
  walBytes: number;
  rounds: number;
}

export interface PgBenchReport {
  /** One line saying what ran where. */
  setting: string;
  turns: number;
  /** Records our run writes per turn, its commits, and those of them that wait for the WAL flush (durable points). */
  recordsPerTurn: number;
  commitsPerTurn: number;
  durablePointsPerTurn: number;
  bytesPerTurn: number;
  figures: PgFigures[];
  /** Why DBOS was not measured, when it was not. */
  dbosSkipped: string | null;
  /** Our run's statements per turn by their first words, as our store's pg client sent them. */
  oursByStatement: Record<string, number>;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A contender's figures per turn from its rounds' samples. */
export function figuresOf(contender: PgContender, samples: readonly PgSample[], turns: number): PgFigures {
  if (samples.length === 0) throw new Error(`no sample of ${contender}`);
  return {
    contender,
    ms: median(samples.map((s) => s.ms)) / turns,
    cpuMs: median(samples.map((s) => s.cpuMs)) / turns,
    statements: median(samples.map((s) => s.statements)) / turns,
    walBytes: median(samples.map((s) => s.walBytes)) / turns,
    rounds: samples.length,
  };
}

export interface PgRatios {
  /** Our time per turn ÷ the floor's (target ≤ 2). */
  oursOverFloor: number;
  /** DBOS's time per turn ÷ ours (target ≥ 2.5), a step a turn; null when DBOS was not measured. */
  dbosOverOurs: number | null;
  /** The same with a step for each of our durable points. */
  dbosPointsOverOurs: number | null;
  walOverFloor: number;
  statementsOverFloor: number;
  /** Our time per turn ÷ the diagnostic floor's (our commits, synchronous_commit as ours); null when not measured. */
  oursOverFloorCommits: number | null;
}

export const TARGET_OVER_FLOOR = 2;
export const TARGET_DBOS_OVER_OURS = 2.5;

export function ratiosOf(figures: readonly PgFigures[]): PgRatios {
  const of = (contender: PgContender) => figures.find((f) => f.contender === contender);
  const floor = of('floor');
  const ours = of('ours');
  if (!floor || !ours) throw new Error('the floor and ours are both measured in every run of the bench');
  const dbos = of('dbos');
  const dbosPoints = of('dbosPoints');
  return {
    oursOverFloor: ours.ms / floor.ms,
    dbosOverOurs: dbos ? dbos.ms / ours.ms : null,
    dbosPointsOverOurs: dbosPoints ? dbosPoints.ms / ours.ms : null,
    walOverFloor: ours.walBytes / floor.walBytes,
    statementsOverFloor: ours.statements / floor.statements,
    oursOverFloorCommits: of('floorCommits') ? ours.ms / of('floorCommits')!.ms : null,
  };
}

const fixed = (n: number, digits: number) => n.toFixed(digits);

export function pgReportLines(report: PgBenchReport): string[] {
  const ratios = ratiosOf(report.figures);
  const lines = [
    report.setting,
    '',
    `${report.turns} tool-using turns a run (bench/workload.ts, scripted model); our run writes ${fixed(report.recordsPerTurn, 1)} records a turn ` +
      `(${Math.round(report.bytesPerTurn)} bytes) in ${fixed(report.commitsPerTurn, 2)} commits, ${fixed(report.durablePointsPerTurn, 2)} of them durable points (waiting for the WAL flush).`,
    'The floor INSERTs the same rows, one statement and one commit for each durable point; "our commits" (a diagnostic),',
    'one for each of our commits, synchronous_commit as ours. DBOS checkpoints the same bytes, in one step a turn or one',
    'step for each of our durable points.',
    'Per turn, the median of the rounds; client CPU: this process (the server\'s is not in it); statements: pg_stat_statements',
    'calls (each one round trip: node-postgres does not pipeline).',
    '',
    `${'contender'.padEnd(24)}  ${'ms/turn'.padStart(8)}  ${'client CPU ms/turn'.padStart(18)}  ${'statements/turn'.padStart(15)}  ${'WAL bytes/turn'.padStart(14)}  rounds`,
  ];
  for (const f of report.figures) {
    lines.push(`${PG_CONTENDER_LABELS[f.contender].padEnd(24)}  ${fixed(f.ms, 3).padStart(8)}  ${fixed(f.cpuMs, 3).padStart(18)}  ${fixed(f.statements, 2).padStart(15)}  ${Math.round(f.walBytes).toString().padStart(14)}  ${String(f.rounds).padStart(6)}`);
  }
  if (report.dbosSkipped !== null) lines.push(`${'DBOS Transact'.padEnd(24)}  not measured: ${report.dbosSkipped}`);
  const byStatement = Object.entries(report.oursByStatement).map(([head, n]) => `${fixed(n, 2)}× ${head}`);
  if (byStatement.length > 0) lines.push('', `Ours by statement, per turn (as sent): ${byStatement.join('; ')}`);
  lines.push(
    '',
    `ours ÷ floor: ${fixed(ratios.oursOverFloor, 2)}× the time, ${fixed(ratios.statementsOverFloor, 2)}× the statements, ${fixed(ratios.walOverFloor, 2)}× the WAL`,
    `Target: our turn ≤ ${TARGET_OVER_FLOOR}× the floor's: ${ratios.oursOverFloor <= TARGET_OVER_FLOOR ? 'met' : 'missed'} (${fixed(ratios.oursOverFloor, 2)}×)`,
  );
  if (ratios.oursOverFloorCommits !== null) lines.push(`ours ÷ the floor with our commits: ${fixed(ratios.oursOverFloorCommits, 2)}× the time (shown, not judged)`);
  if (ratios.dbosOverOurs !== null) {
    lines.push(`Target: DBOS's turn (a step a turn) ≥ ${TARGET_DBOS_OVER_OURS}× ours: ${ratios.dbosOverOurs >= TARGET_DBOS_OVER_OURS ? 'met' : 'missed'} (${fixed(ratios.dbosOverOurs, 2)}×)`);
  }
  if (ratios.dbosPointsOverOurs !== null) lines.push(`DBOS with a step for each of our durable points ÷ ours: ${fixed(ratios.dbosPointsOverOurs, 2)}× (shown, not judged)`);
  return lines;
}
