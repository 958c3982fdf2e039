// timeoutSignal (src/net/timeout.ts): aborts as AbortSignal.timeout does, and once cleared never.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { timeoutSignal } from '../../src/net/timeout.ts';

test('aborts after the time with a TimeoutError, as AbortSignal.timeout does', async () => {
  const t = timeoutSignal(20);
  const native = AbortSignal.timeout(20);
  assert.equal(t.signal.aborted, false);
  await sleep(60);
  assert.equal(t.signal.aborted, true);
  const reason = t.signal.reason as DOMException;
  assert.equal(reason.name, (native.reason as DOMException).name);
  assert.equal(reason.name, 'TimeoutError');
  assert.throws(() => t.signal.throwIfAborted(), { name: 'TimeoutError' });
});

test('cleared before the time, it never aborts', async () => {
  const t = timeoutSignal(20);
  t.clear();
  await sleep(60);
  assert.equal(t.signal.aborted, false);
});
