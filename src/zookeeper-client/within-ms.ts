/**
 * Settles when `work` does (either way) or after `ms`, whichever comes first: a bound on a wait for
 * ZooKeeper whose outcome the caller looks at afterwards (the work itself goes on).
 */
export async function withinMs(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([work.then(() => undefined, () => undefined), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}
