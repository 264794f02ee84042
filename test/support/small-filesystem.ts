import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real filesystem of a few pages (a tmpfs), so a test can fill it, free it and turn it read-only:
 * the kernel's own ENOSPC and EROFS, not a stand-in that only throws. Mounting needs root
 * (CAP_SYS_ADMIN); `smallFilesystemUnavailable` says why it cannot be had here, once per file.
 */
export interface SmallFilesystem {
  readonly dir: string;
  /** Fills every free page with a filler file, then gives back `bytes` (rounded up to whole pages). */
  fill(leaveFreeBytes: number): void;
  /** Deletes the filler. */
  free(): void;
  remountReadOnly(): void;
  remountWritable(): void;
  unmount(): void;
}

const PAGE = 4096;

export function mountSmallFilesystem(sizeBytes: number): SmallFilesystem {
  const dir = mkdtempSync(join(tmpdir(), 'es-lock-proxy-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  const filler = join(dir, '.filler');
  const remount = (mode: 'ro' | 'rw'): void => {
    execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
  };
  return {
    dir,
    fill(leaveFreeBytes) {
      const fd = openSync(filler, 'a');
      try {
        const chunk = Buffer.alloc(PAGE, 0x2e);
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (error) {
            if (error instanceof Error && 'code' in error && error.code === 'ENOSPC') break;
            throw error;
          }
        }
        const pages = Math.ceil(leaveFreeBytes / PAGE);
        ftruncateSync(fd, Math.max(0, fstatSync(fd).size - pages * PAGE));
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    remountReadOnly: () => remount('ro'),
    remountWritable: () => remount('rw'),
    unmount() {
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Null when a small filesystem can be mounted here; otherwise the reason, for a test's skip. */
export function smallFilesystemUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (CAP_SYS_ADMIN); this runs as a normal user';
  try {
    mountSmallFilesystem(PAGE * 4).unmount();
    return null;
  } catch (error) {
    const stderr = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    return `this machine refuses to mount a tmpfs (${stderr})`;
  }
}
