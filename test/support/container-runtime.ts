import { getContainerRuntimeClient } from 'testcontainers';

export type ContainerRuntime = { readonly available: true } | { readonly available: false; readonly reason: string };

const DETECTION_TIMEOUT_MS = 5_000;

/** Whether testcontainers can reach Docker/Podman here, decided within a few seconds. */
export async function detectContainerRuntime(): Promise<ContainerRuntime> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ContainerRuntime>((resolve) => {
    timer = setTimeout(() => resolve({ available: false, reason: `no container runtime answered within ${DETECTION_TIMEOUT_MS}ms` }), DETECTION_TIMEOUT_MS);
  });
  const probe = getContainerRuntimeClient().then(
    (): ContainerRuntime => ({ available: true }),
    (error: unknown): ContainerRuntime => ({ available: false, reason: `no container runtime: ${error instanceof Error ? error.message : String(error)}` }),
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
