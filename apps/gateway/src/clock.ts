/** The gateway's sense of time, injectable so that tests can cross a sunset date or a window's end. */
export abstract class Clock {
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}
