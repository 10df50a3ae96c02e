/**
 * The heap of the build's JVM, sized to the build's flavour. Inside the sandbox the JVM sees no
 * control group (none is mounted there), so by itself it sizes its heap from the whole
 * machine's memory, and the former fixed `-Xmx2g` was the whole of flavour S's 2 GiB: a build
 * that used it would be killed by the kernel instead of collecting garbage, and larger
 * flavours gave sbt nothing more. `-XX:MaxRAM` tells the JVM the flavour's memory; the heap
 * starts at a quarter of it and may grow to 70 % (the rest is metaspace, code cache, thread
 * stacks and the files the build reads, which count against the same limit).
 */
import { DEFAULT_BUILD_FLAVOR, flavorNamed } from '../../core/flavors.js';
import { humanSize } from '../../shared/human-size.js';

export const BUILD_HEAP_INITIAL_PERCENT = 25;
export const BUILD_HEAP_MAX_PERCENT = 70;

/**
 * Heap options the JVM reads from its environment before its command line. An option on the
 * command line would override the app's own, so when the app sizes the heap there, the build
 * adds none (an `-Xmx` there wins over a percentage anyway, but a percentage would not).
 */
const HEAP_VARIABLES = ['JAVA_TOOL_OPTIONS', 'JDK_JAVA_OPTIONS'] as const;
const HEAP_OPTION = /-Xm[sx]|-XX:(?:Max|Initial|Min)?RAM(?:Percentage)?\b|-XX:(?:Max|Initial)HeapSize\b/;

export interface BuildHeap {
  options: string[];
  /** What the plan says about it. */
  note: string;
}

export function buildHeap(memoryBytes: number | undefined, env: Record<string, string>): BuildHeap {
  const own = HEAP_VARIABLES.find((name) => HEAP_OPTION.test(env[name] ?? ''));
  if (own) {
    return { options: [], note: `the build's JVM heap is the one the app's ${own} sets (the build adds no heap option)` };
  }
  const memory = memoryBytes ?? flavorNamed(DEFAULT_BUILD_FLAVOR).memoryBytes;
  const mib = (percent: number) => `${Math.floor((memory * percent) / 100 / 2 ** 20)} MiB`;
  return {
    options: [
      `-XX:MaxRAM=${memory}`,
      `-XX:InitialRAMPercentage=${BUILD_HEAP_INITIAL_PERCENT}`,
      `-XX:MaxRAMPercentage=${BUILD_HEAP_MAX_PERCENT}`,
    ],
    note:
      `the build's JVM heap fits the build flavour's ${humanSize(memory)}: ${mib(BUILD_HEAP_INITIAL_PERCENT)} at first, ` +
      `at most ${mib(BUILD_HEAP_MAX_PERCENT)} (${BUILD_HEAP_MAX_PERCENT} %); set -Xmx in JAVA_TOOL_OPTIONS to choose another`,
  };
}
