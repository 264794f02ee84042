import { pino, type Logger } from 'pino';
import { startProxy, type RunningProxy, type StartProxyDeps } from '../../src/server/start-proxy.js';
import { startEsStandIn, type EsStandIn, type EsStandInOptions } from './es-stand-in.js';
import { testSettings, type TestSettingsOverrides } from './test-settings.js';

export interface ProxyHarness {
  readonly standIn: EsStandIn;
  readonly proxy: RunningProxy;
  /** `http://127.0.0.1:<proxy port>` */
  readonly proxyUrl: string;
  readonly adminUrl: string;
  close(): Promise<void>;
}

export interface ProxyHarnessOptions {
  readonly standIn?: EsStandInOptions;
  readonly settings?: TestSettingsOverrides;
  readonly deps?: StartProxyDeps;
  /** Upstream hosts; default the stand-in alone. `STAND_IN` is replaced by the stand-in's URL. */
  readonly hosts?: readonly string[];
  readonly logger?: Logger;
}

export const STAND_IN = 'STAND_IN';

/** A stand-in Elasticsearch with a proxy in front of it, both on loopback port 0. */
export async function startProxyHarness(options: ProxyHarnessOptions = {}): Promise<ProxyHarness> {
  const standIn = await startEsStandIn(options.standIn);
  try {
    const hosts = (options.hosts ?? [STAND_IN]).map((host) => (host === STAND_IN ? standIn.url : host));
    const settings = testSettings({ ...options.settings, elasticsearch: { ...options.settings?.elasticsearch, hosts } });
    const proxy = await startProxy(settings, options.logger ?? pino({ level: 'silent' }), options.deps);
    return {
      standIn,
      proxy,
      proxyUrl: `http://127.0.0.1:${proxy.proxyAddress.port}`,
      adminUrl: `http://127.0.0.1:${proxy.adminAddress.port}`,
      close: async () => {
        await proxy.close();
        await standIn.stop();
      },
    };
  } catch (error) {
    await standIn.stop();
    throw error;
  }
}
