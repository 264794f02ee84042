import { readdir, readFile } from 'node:fs/promises';

/** CPU time a JVM has used since it started, ms: all its threads, and its JIT compiler threads. */
export interface JvmCpu {
  readonly totalMs: number;
  readonly compilerMs: number;
}

/** HotSpot names its JIT threads "C1 CompilerThread0", "C2 CompilerThread1" (15 characters in `comm`). */
const COMPILER_THREAD = /^C\d CompilerThre/;

/** Time on the CPU of one thread, ms (the first field of schedstat is in ns). */
async function threadCpuMs(taskDir: string): Promise<{ ms: number; compiler: boolean } | null> {
  try {
    const [schedstat, comm] = await Promise.all([readFile(`${taskDir}/schedstat`, 'utf8'), readFile(`${taskDir}/comm`, 'utf8')]);
    return { ms: Number(schedstat.split(' ')[0]) / 1e6, compiler: COMPILER_THREAD.test(comm) };
  } catch {
    return null; // the thread ended between the listing and the read
  }
}

/**
 * Read from /proc (Linux). Null elsewhere, or when the process is gone. Threads that ended are
 * not counted: compare two readings only for what runs through (the JIT threads live as long as
 * the JVM).
 */
export async function jvmCpu(pid: number | undefined): Promise<JvmCpu | null> {
  if (pid === undefined) return null;
  let tasks: string[];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const threads = await Promise.all(tasks.map((tid) => threadCpuMs(`/proc/${pid}/task/${tid}`)));
  let totalMs = 0;
  let compilerMs = 0;
  for (const thread of threads) {
    if (thread === null) continue;
    totalMs += thread.ms;
    if (thread.compiler) compilerMs += thread.ms;
  }
  return { totalMs, compilerMs };
}

/** CPU used between two readings (null when either is missing). */
export function jvmCpuSince(before: JvmCpu | null, after: JvmCpu | null): JvmCpu | null {
  if (before === null || after === null) return null;
  return { totalMs: after.totalMs - before.totalMs, compilerMs: after.compilerMs - before.compilerMs };
}
