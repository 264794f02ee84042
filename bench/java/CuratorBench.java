import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

/**
 * The same four workloads as bench/lock/es-lock-bench.ts against Apache Curator's
 * InterProcessMutex, printing the same single JSON line (impl "curator").
 * Args: ZK WORKLOAD OPS CLIENTS KEYS PER_CLIENT
 */
public final class CuratorBench {
  /** As bench/lock/es-lock-bench.ts: 2,000 (capped by OPS), so that the JIT has compiled the lock path. */
  private static final int WARMUP_OPS = 2_000;

  public static void main(String[] args) throws Exception {
    String zk = args[0];
    String workload = args[1];
    int ops = Integer.parseInt(args[2]);
    int clients = Integer.parseInt(args[3]);
    int keys = Integer.parseInt(args[4]);
    int perClient = Integer.parseInt(args[5]);
    String run = UUID.randomUUID().toString().substring(0, 8);
    List<CuratorFramework> sessions = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      CuratorFramework c = CuratorFrameworkFactory.newClient(zk, 10_000, 5_000, new RetryNTimes(5, 1_000));
      c.start();
      c.blockUntilConnected();
      sessions.add(c);
    }
    try {
      String base = "/curator-bench/" + workload;
      if (workload.equals("cold") || workload.equals("warm")) {
        CuratorFramework c = sessions.get(0);
        InterProcessMutex warm = new InterProcessMutex(c, base + "/warm-" + run);
        for (int i = 0; i < Math.min(ops, WARMUP_OPS); i++) once(workload.equals("warm") ? warm : new InterProcessMutex(c, base + "/w-" + run + "-" + i));
        double[] lat = new double[ops];
        for (int i = 0; i < ops; i++) {
          InterProcessMutex m = workload.equals("warm") ? warm : new InterProcessMutex(c, base + "/" + run + "-" + i);
          long t0 = System.nanoTime();
          once(m);
          lat[i] = (System.nanoTime() - t0) / 1e6;
        }
        double mean = Arrays.stream(lat).average().orElse(0);
        Arrays.sort(lat);
        print(workload, ops, Math.round(1000 / mean), pct(lat, 50), pct(lat, 99), 0, 1);
        return;
      }
      boolean hot = workload.equals("hot");
      int threadsPerClient = perClient;
      contended(sessions, base, run, hot, keys, threadsPerClient, Math.min(ops, WARMUP_OPS));
      long t0 = System.nanoTime();
      int violations = contended(sessions, base, run, hot, keys, threadsPerClient, ops);
      double elapsed = (System.nanoTime() - t0) / 1e6;
      print(workload, ops, Math.round(ops / elapsed * 1000), null, null, violations, clients);
    } finally {
      for (CuratorFramework c : sessions) c.close();
    }
  }

  private static void once(InterProcessMutex m) throws Exception {
    if (!m.acquire(30, TimeUnit.SECONDS)) throw new IllegalStateException("acquire timed out");
    m.release();
  }

  private static int contended(List<CuratorFramework> sessions, String base, String run, boolean hot, int keys, int threadsPerClient, int ops)
      throws InterruptedException {
    AtomicInteger started = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    ConcurrentHashMap<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    List<Thread> threads = new ArrayList<>();
    for (CuratorFramework c : sessions) {
      InterProcessMutex hotMutex = new InterProcessMutex(c, base + "/hot-" + run);
      for (int t = 0; t < threadsPerClient; t++) {
        Thread th = new Thread(() -> {
          try {
            while (started.incrementAndGet() <= ops) {
              String key = hot ? "hot" : run + "-" + ThreadLocalRandom.current().nextInt(keys);
              InterProcessMutex m = hot ? hotMutex : new InterProcessMutex(c, base + "/" + key);
              if (!m.acquire(60, TimeUnit.SECONDS)) throw new IllegalStateException("acquire timed out");
              AtomicInteger n = inside.computeIfAbsent(key, k -> new AtomicInteger());
              if (n.incrementAndGet() > 1) violations.incrementAndGet();
              Thread.yield();
              n.decrementAndGet();
              m.release();
            }
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
        threads.add(th);
        th.start();
      }
    }
    for (Thread th : threads) th.join();
    return violations.get();
  }

  private static Double pct(double[] sorted, double p) {
    int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1));
    return Math.round(sorted[i] * 1000) / 1000.0;
  }

  private static void print(String workload, int ops, long opsPerS, Double p50, Double p99, int violations, int clients) {
    System.out.println("{\"impl\":\"curator\",\"workload\":\"" + workload + "\",\"ops\":" + ops + ",\"ops_per_s\":" + opsPerS
        + ",\"p50_ms\":" + p50 + ",\"p99_ms\":" + p99 + ",\"violations\":" + violations + ",\"clients\":" + clients + "}");
  }
}
