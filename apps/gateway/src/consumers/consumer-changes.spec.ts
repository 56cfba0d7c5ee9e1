import { Logger } from '@nestjs/common';
import { ConsumerChange, ConsumerChanges, mergeChanges, normaliseChange, parseChange } from './consumer-changes';

/** A channel whose sends the test controls: each one waits for `answer` (or fails when told to). */
class ScriptedChanges extends ConsumerChanges {
  readonly sent: ConsumerChange[] = [];
  mode: 'answer' | 'hang' | 'refuse' = 'answer';
  private hung: Array<() => void> = [];

  constructor() {
    super({ deadlineMs: 100, retryMs: 20 });
  }

  /** Lets every hung send through (like a frozen Redis that runs again). */
  resume(): void {
    this.mode = 'answer';
    for (const release of this.hung.splice(0)) release();
  }

  protected async broadcast(change: ConsumerChange): Promise<void> {
    if (this.mode === 'refuse') throw new Error('Connection is closed.');
    if (this.mode === 'hang') await new Promise<void>((resolve) => this.hung.push(resolve));
    this.sent.push(change);
  }
}

const change = (...keyHashes: string[]): ConsumerChange => ({ keyHashes, consumerIds: [] });
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('ConsumerChanges', () => {
  let channel: ScriptedChanges;
  let errors: jest.SpyInstance;
  let warnings: jest.SpyInstance;

  beforeEach(() => {
    channel = new ScriptedChanges();
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    await channel.close();
    jest.restoreAllMocks();
  });

  it('applies a change here at once and sends it', async () => {
    const heard: ConsumerChange[] = [];
    channel.onChange((c) => heard.push(c));
    await channel.publish(change('a'));
    expect(heard).toEqual([change('a')]);
    expect(channel.sent).toEqual([change('a')]);
    expect(errors).not.toHaveBeenCalled();
  });

  it('answers within its deadline while the channel hangs, logs once, and sends everything once it answers', async () => {
    channel.mode = 'hang';
    // Each publish resolves by its deadline while the channel still hangs (nothing sent yet): without the deadline
    // they would wait for resume(), which only comes after them, and the test would time out. No clock is read.
    await channel.publish(change('a'));
    await channel.publish(change('b'));
    await channel.publish(change('c'));
    expect(channel.sent).toEqual([]);
    expect(errors).toHaveBeenCalledTimes(1);
    channel.resume();
    await until(() => channel.sent.length === 2);
    // The hung send completes, then what queued behind it leaves as one message.
    expect(channel.sent).toEqual([change('a'), change('b', 'c')]);
  });

  it('retries what the channel refused until it takes it, and says when it does', async () => {
    channel.mode = 'refuse';
    await channel.publish(change('a'));
    await channel.publish(change('b'));
    expect(errors).toHaveBeenCalledTimes(1);
    channel.mode = 'answer';
    await until(() => channel.sent.length > 0);
    expect(channel.sent).toEqual([change('a', 'b')]);
    expect(warnings).toHaveBeenCalledTimes(1);
  });

  it('merges into "everything" beyond 50 names, keeping the unbanned consumers, and sends those 50 at a time', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `h${i}`);
    expect(normaliseChange({ ...change(...many), unbanned: ['acme'] })).toEqual({
      keyHashes: [],
      consumerIds: [],
      all: true,
      unbanned: ['acme'],
    });
    expect(mergeChanges({ ...change('a'), unbanned: ['x'] }, { ...change('a', 'b'), unbanned: ['x', 'y'] })).toEqual({
      keyHashes: ['a', 'b'],
      consumerIds: [],
      unbanned: ['x', 'y'],
    });
    channel.mode = 'refuse';
    await Promise.all(Array.from({ length: 120 }, (_, i) => channel.publish({ ...change(), unbanned: [`c${i}`] })));
    channel.mode = 'answer';
    await until(() => channel.sent.length === 3);
    expect(channel.sent.map((c) => c.unbanned?.length)).toEqual([50, 50, 20]);
  });

  it('reads what other instances send, ignoring what it does not know', () => {
    expect(parseChange('{"keyHashes":["a",1],"consumerIds":[],"unbanned":["acme"],"later":true}')).toEqual({
      keyHashes: ['a'],
      consumerIds: [],
      unbanned: ['acme'],
    });
    expect(parseChange('{"all":true}')).toEqual({ keyHashes: [], consumerIds: [], all: true });
    expect(parseChange('not json')).toBeUndefined();
  });
});
