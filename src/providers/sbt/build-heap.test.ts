import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { buildHeap } from './build-heap.js';

/** The heap sizes a real JVM settles on with these options. */
function heapOf(options: string[], env: Record<string, string> = {}): { initial: number; max: number } {
  const flags = execFileSync('java', [...options, '-XX:+UseParallelGC', '-XX:+PrintFlagsFinal', '-version'], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const value = (name: string) => Number(new RegExp(`\\b${name}\\s+=\\s+(\\d+)`).exec(flags)?.[1]);
  return { initial: value('InitialHeapSize'), max: value('MaxHeapSize') };
}

const MiB = 2 ** 20;

describe("sbt build's heap", () => {
  it("the JVM takes a quarter of the flavour's memory at first and at most 70 %, whatever the machine has", () => {
    for (const memory of [512 * MiB, 2048 * MiB, 8192 * MiB]) {
      const { initial, max } = heapOf(buildHeap(memory, {}).options);
      // The collector rounds sizes to its alignment: within 2 MiB.
      assert.ok(Math.abs(max - memory * 0.7) < 2 * MiB, `max heap ${max} for ${memory}`);
      assert.ok(Math.abs(initial - memory * 0.25) < 2 * MiB, `initial heap ${initial} for ${memory}`);
    }
  });

  it("an -Xmx in the app's JAVA_TOOL_OPTIONS is the heap; the build then adds no option", () => {
    const env = { JAVA_TOOL_OPTIONS: '-Xmx900m' };
    assert.deepEqual(buildHeap(2048 * MiB, env).options, []);
    assert.equal(heapOf([], env).max, 900 * MiB);
  });
});
