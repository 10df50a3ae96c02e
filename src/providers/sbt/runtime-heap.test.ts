import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { runtimeHeapVariables } from './runtime-heap.js';

/** The maximum heap a real JVM settles on with this environment (and these command-line options). */
function maxHeapWith(env: Record<string, string>, options: string[] = []): number {
  const flags = execFileSync('java', [...options, '-XX:+UseSerialGC', '-XX:+PrintFlagsFinal', '-version'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return Number(/\bMaxHeapSize\s+=\s+(\d+)/.exec(flags)?.[1]);
}

const MiB = 2 ** 20;

describe("a running JVM app's heap", () => {
  it("the JVM's maximum heap follows the flavour's memory, not the machine's", () => {
    // The JVM's own defaults, as if it saw the limit: a quarter, half on small memories (MinRAMPercentage).
    for (const [memory, share] of [
      [256 * MiB, 1 / 2],
      [1024 * MiB, 1 / 4],
      [4096 * MiB, 1 / 4],
    ] as const) {
      const max = maxHeapWith(runtimeHeapVariables(memory, {}));
      // The collector rounds sizes to its alignment and keeps a little back: within 4 MiB.
      assert.ok(Math.abs(max - memory * share) < 4 * MiB, `max heap ${max} for ${memory}`);
    }
  });

  it("the app's own JAVA_TOOL_OPTIONS are kept after the limit", () => {
    const vars = runtimeHeapVariables(1024 * MiB, { JAVA_TOOL_OPTIONS: '-Dfile.encoding=UTF-8 -XX:+UseSerialGC' });
    assert.equal(vars.JAVA_TOOL_OPTIONS, `-XX:MaxRAM=${1024 * MiB} -Dfile.encoding=UTF-8 -XX:+UseSerialGC`);
  });

  it('a heap the app sets in JAVA_TOOL_OPTIONS (or JDK_JAVA_OPTIONS) is the heap: nothing is added', () => {
    assert.deepEqual(runtimeHeapVariables(1024 * MiB, { JAVA_TOOL_OPTIONS: '-Xmx300m' }), {});
    assert.deepEqual(runtimeHeapVariables(1024 * MiB, { JDK_JAVA_OPTIONS: '-XX:MaxRAMPercentage=50' }), {});
  });

  it("an -Xmx on the command line (the staged script puts the app's JAVA_OPTS there) wins over the flavour", () => {
    assert.equal(maxHeapWith(runtimeHeapVariables(1024 * MiB, {}), ['-Xmx96m']), 96 * MiB);
  });
});
