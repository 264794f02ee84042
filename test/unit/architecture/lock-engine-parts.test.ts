import { readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './source-imports.js';

const ENGINE = join(SRC, 'lock/zookeeper');

/** The document lock, the parts it is composed of (docs/lock-protocol.md) and the pieces they hold. */
const PARTS = [
  'document-lock.ts',
  'cohort-core.ts',
  'cohort-nodes.ts',
  'cohort/local-cohort.ts',
  'cohort/foreign-queue-watch.ts',
  'cohort/recent-releases.ts',
  'queue/cohort-queue-loop.ts',
  'queue/wake-up.ts',
  'ownership/cohort-ownership.ts',
  'ownership/holder-watch.ts',
  'ownership/forced-release-epoch.ts',
  'recovery/cohort-recovery.ts',
].map((file) => join(ENGINE, file));

function classesOf(file: string): ts.ClassDeclaration[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  return source.statements.filter((statement): statement is ts.ClassDeclaration => ts.isClassDeclaration(statement));
}

function extendsClause(declaration: ts.ClassDeclaration): string | null {
  const clause = declaration.heritageClauses?.find((heritage) => heritage.token === ts.SyntaxKind.ExtendsKeyword);
  return clause?.types[0]?.expression.getText() ?? null;
}

function pascalCase(file: string): string {
  return basename(file, '.ts')
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** Fields anybody outside the class may assign: neither private nor readonly. */
function writableFields(declaration: ts.ClassDeclaration): string[] {
  return declaration.members
    .filter((member): member is ts.PropertyDeclaration => ts.isPropertyDeclaration(member))
    .filter((member) => {
      const modifiers = ts.getModifiers(member) ?? [];
      const sealed = modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword);
      return !sealed && !ts.isPrivateIdentifier(member.name);
    })
    .map((member) => `${declaration.name?.text ?? '?'}.${member.name.getText()}`);
}

describe('the ZooKeeper lock engine is composed, not inherited', () => {
  it('no class of the engine extends another, errors aside', () => {
    const extending = sourceFiles(ENGINE).flatMap((file) =>
      classesOf(file)
        .map((declaration) => ({ name: declaration.name?.text ?? '?', base: extendsClause(declaration) }))
        .filter(({ base }) => base !== null && !/Error$/.test(base))
        .map(({ name, base }) => `${relative(SRC, file)}: ${name} extends ${base ?? ''}`),
    );
    expect(extending).toEqual([]);
  });

  it('each part of the document lock is the class its file is named for', () => {
    const mismatched = PARTS.filter((file) => !classesOf(file).some((declaration) => declaration.name?.text === pascalCase(file)));
    expect(mismatched.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('each part keeps its state to itself: no field another part could assign', () => {
    expect(PARTS.flatMap((file) => classesOf(file).flatMap(writableFields))).toEqual([]);
  });

  it('the check sees a field another part could assign', () => {
    const file = join(ENGINE, 'cohort-nodes.ts');
    const open = ts.createSourceFile(file, 'class CohortNodes { entry: string | null = null; private gone = false; }', ts.ScriptTarget.Latest, true);
    const declaration = open.statements.find((statement): statement is ts.ClassDeclaration => ts.isClassDeclaration(statement));
    expect(declaration === undefined ? [] : writableFields(declaration)).toEqual(['CohortNodes.entry']);
  });
});
