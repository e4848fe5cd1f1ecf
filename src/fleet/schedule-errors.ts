/** The errors of schedules, apart from what reads cron expressions and the database: the errors entry loads neither. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export class ScheduleCronError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ScheduleCronError';
  constructor(
    readonly cron: string,
    readonly timezone: string,
    readonly problem: string,
  ) {
    super(
      `The schedule's cron expression ${JSON.stringify(cron)} in time zone ${JSON.stringify(timezone)} cannot be used: ${problem}. ` +
        "Give five fields (minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5') or six with the seconds first ('*/10 * * * * *'), and an IANA time zone (e.g. Europe/Paris, UTC). Nothing was changed.",
    );
  }
}

export class ScheduleRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ScheduleRefusedError';
  constructor(readonly problem: string) {
    super(`The schedule cannot be added: ${problem}. Nothing was changed.`);
  }
}

export class ScheduleNameTakenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ScheduleNameTakenError';
  constructor(
    readonly scheduleName: string,
    readonly differences: readonly string[],
  ) {
    super(
      `A schedule named ${scheduleName} exists already with another ${differences.join('; ')}. Nothing was changed. ` +
        `Give the new one another name (--name), or remove the old one first (durable-agent schedule remove --name ${scheduleName}).`,
    );
  }
}

export class ScheduleNotFoundError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ScheduleNotFoundError';
  constructor(readonly scheduleName: string) {
    super(`The fleet has no schedule named ${scheduleName}. durable-agent schedule list shows those it has.`);
  }
}
