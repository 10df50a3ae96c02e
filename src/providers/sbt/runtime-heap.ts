/**
 * The memory the JVM of a running app (an instance, a worker, a hook, a one-off command) sizes
 * itself from. Like the build's JVM (build-heap.ts) it sees no control group inside the sandbox,
 * so on its own it takes a quarter of the whole machine's memory as its maximum heap, far beyond
 * the flavour's limit: the kernel then kills it instead of the JVM collecting garbage.
 * `-XX:MaxRAM=<flavour memory>` gives it what a JVM that saw the limit would compute (its own
 * defaults: a quarter of the flavour as maximum heap, half of a small one). It goes through JAVA_TOOL_OPTIONS, which
 * every JVM reads (the staged script's, a CC_RUN_COMMAND's, a worker's `java -jar`) and which
 * any command-line option overrides: an `-Xmx` in the app's JAVA_OPTS still decides the heap.
 * The flavour is known only when the process starts (scale may change it without a rebuild),
 * hence a variable of the process, not of the plan.
 */
const HEAP_OPTION = /-Xm[sx]|-XX:(?:Max|Initial|Min)?RAM(?:Percentage)?\b|-XX:(?:Max|Initial)HeapSize\b/;

export function runtimeHeapVariables(memoryBytes: number, env: Record<string, string>): Record<string, string> {
  const own = env.JAVA_TOOL_OPTIONS ?? '';
  // The app sized the JVM itself there: its choice stands, and nothing is added.
  if (HEAP_OPTION.test(own) || HEAP_OPTION.test(env.JDK_JAVA_OPTIONS ?? '')) return {};
  const maxRam = `-XX:MaxRAM=${Math.floor(memoryBytes)}`;
  return { JAVA_TOOL_OPTIONS: own.trim() === '' ? maxRam : `${maxRam} ${own}` };
}
