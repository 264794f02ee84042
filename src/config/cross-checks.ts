import { accessSync, constants } from 'node:fs';
import type { ConfigKey, ValueOf } from './config-keys.js';
import { invalidSetting, type RawSetting } from './raw-setting.js';
import { describeFileError } from './file-errors.js';
import { ListenerTlsError, readListenerTls } from '../tls/listener-tls.js';

type SettingOf = (key: ConfigKey) => RawSetting;

/**
 * Rules that involve several keys. Each throws a one-line `ConfigError` blaming the key the user
 * most likely got wrong: the one they set rather than the one left at its default.
 */
export function checkAcrossKeys(value: ValueOf, settingOf: SettingOf, options: { readonly checkFiles: boolean }): string[] {
  checkLockPrefixes(value, settingOf);
  checkElasticsearchAuth(value, settingOf);
  checkDistinctPorts(value, settingOf);
  checkListenerTlsPairs(value, settingOf);
  checkForegroundAllowNeedsChecks(value, settingOf);
  if (options.checkFiles) {
    checkReadableCaFile(value, settingOf);
    checkListenerTlsFiles(value, settingOf);
  }
  return value('elasticsearch.ssl.verify') ? [] : ['elasticsearch.ssl.verify=false: TLS certificates of the cluster are not verified'];
}

/**
 * ZooKeeper serves a lock's queue sorted by node name `<prefix>-<sequence>`: foreground nodes
 * must sort before every background node whatever the sequence numbers. Comparing by code unit
 * (as ZooKeeper clients sort, not by locale) and with `-` below every letter and digit, that
 * holds exactly when the foreground prefix sorts first. A prefix that starts the other one
 * ("A" and "AB") would still sort correctly but lets a `startsWith` classifier mistake one for
 * the other, so it is refused too.
 */
function checkLockPrefixes(value: ValueOf, settingOf: SettingOf): void {
  const foreground = value('zookeeper.foregound.lock.prefix');
  const background = value('zookeeper.backgound.lock.prefix');
  const foregroundSetting = settingOf('zookeeper.foregound.lock.prefix');
  const backgroundSetting = settingOf('zookeeper.backgound.lock.prefix');
  const blameBackground = foregroundSetting.origin === 'default' && backgroundSetting.origin !== 'default';
  if (!(foreground < background)) {
    throw blameBackground
      ? invalidSetting(backgroundSetting, `a prefix that sorts after the foreground prefix "${foreground}"`)
      : invalidSetting(foregroundSetting, `a prefix that sorts before the background prefix "${background}"`);
  }
  if (background.startsWith(foreground)) {
    throw blameBackground
      ? invalidSetting(backgroundSetting, `a prefix that does not start with the foreground prefix "${foreground}"`)
      : invalidSetting(foregroundSetting, `a prefix that is not the start of the background prefix "${background}"`);
  }
}

function checkElasticsearchAuth(value: ValueOf, settingOf: SettingOf): void {
  const username = value('elasticsearch.auth.username');
  const password = value('elasticsearch.auth.password');
  if (value('elasticsearch.auth.api_key') !== null && (username !== null || password !== null)) {
    throw invalidSetting(
      settingOf('elasticsearch.auth.api_key'),
      'either elasticsearch.auth.api_key or elasticsearch.auth.username/password, not both',
    );
  }
  if (username !== null && password === null) {
    throw invalidSetting(settingOf('elasticsearch.auth.username'), 'elasticsearch.auth.password to be set too');
  }
  if (password !== null && username === null) {
    throw invalidSetting(settingOf('elasticsearch.auth.password'), 'elasticsearch.auth.username to be set too');
  }
}

/**
 * Foreground rights name users, roles and API keys, which only a credential check tells: with the
 * checks off nobody matches the list, so every foreground write would be demoted (or refused).
 * `auto` is left alone: whether the cluster has security on is only known once it answers.
 */
function checkForegroundAllowNeedsChecks(value: ValueOf, settingOf: SettingOf): void {
  if (value('proxy.auth.verify') !== 'off' || value('proxy.priority.foreground.allow').length === 0) return;
  throw invalidSetting(
    settingOf('proxy.priority.foreground.allow'),
    'an empty list with proxy.auth.verify=off (without credential checks nobody is recognised, so every foreground write would be demoted)',
  );
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::']);

function checkDistinctPorts(value: ValueOf, settingOf: SettingOf): void {
  const listenPort = value('proxy.listen.port');
  const listenHost = value('proxy.listen.host');
  const adminHost = value('proxy.admin.host');
  const hostsOverlap = listenHost === adminHost || WILDCARD_HOSTS.has(listenHost) || WILDCARD_HOSTS.has(adminHost);
  if (listenPort !== 0 && listenPort === value('proxy.admin.port') && hostsOverlap) {
    throw invalidSetting(settingOf('proxy.admin.port'), `a port other than proxy.listen.port (${listenPort})`);
  }
}

function checkReadableCaFile(value: ValueOf, settingOf: SettingOf): void {
  const caFile = value('elasticsearch.ssl.ca');
  if (caFile === null) return;
  try {
    accessSync(caFile, constants.R_OK);
  } catch (error) {
    throw invalidSetting(settingOf('elasticsearch.ssl.ca'), `a readable file (${describeFileError(error)})`);
  }
}

/** The listener's certificate and key come together; a client CA needs both. */
function checkListenerTlsPairs(value: ValueOf, settingOf: SettingOf): void {
  const certFile = value('proxy.listen.tls.cert');
  const keyFile = value('proxy.listen.tls.key');
  if (certFile !== null && keyFile === null) throw invalidSetting(settingOf('proxy.listen.tls.cert'), 'proxy.listen.tls.key to be set too');
  if (keyFile !== null && certFile === null) throw invalidSetting(settingOf('proxy.listen.tls.key'), 'proxy.listen.tls.cert to be set too');
  if (certFile === null && value('proxy.listen.tls.ca') !== null) {
    throw invalidSetting(settingOf('proxy.listen.tls.ca'), 'proxy.listen.tls.cert and proxy.listen.tls.key to be set too');
  }
}

/**
 * The listener's TLS files are read and matched at start, so a typo, an unreadable file or the key
 * of another certificate stops the start (exit 2) instead of failing every client's handshake.
 */
function checkListenerTlsFiles(value: ValueOf, settingOf: SettingOf): void {
  const certFile = value('proxy.listen.tls.cert');
  const keyFile = value('proxy.listen.tls.key');
  if (certFile === null || keyFile === null) return;
  try {
    readListenerTls({ certFile, keyFile, caFile: value('proxy.listen.tls.ca') });
  } catch (error) {
    if (error instanceof ListenerTlsError) throw invalidSetting(settingOf(error.key), error.expected);
    throw error;
  }
}
