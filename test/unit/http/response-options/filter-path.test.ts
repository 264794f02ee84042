import { describe, expect, it } from 'vitest';
import { filterJson, type JsonObject } from '../../../../src/http/response-options/filter-json.js';
import { renderAnswer } from '../../../../src/http/response-options/render-json.js';
import { responseOptionsOf } from '../../../../src/http/response-options/response-options.js';

/**
 * `filter_path` as Elasticsearch applies it, checked case by case against the rules of its
 * source (elastic/elasticsearch): FilterPath (trie of dotted segments, `\.` escapes, trimming,
 * Glob.globMatch for `*`, `**` staying active at every level below), FilterPathBasedFilter
 * (scalars only kept by exclusions, empty containers dropped unless an exclusion meets one that
 * was empty already, #109668), JsonXContentGenerator (inclusion filter first, exclusion filter
 * on its output, root object always written) and AbstractRestChannel (comma-separated filters,
 * a leading `-` makes an exclusion). The comments name the Elasticsearch test each row follows
 * (FilterPathGeneratorFilteringTests, AbstractFilteringTestCase, AbstractXContentFilteringTestCase).
 */
const BULK_ANSWER: JsonObject = {
  took: 7,
  errors: true,
  items: [
    { index: { _index: 'products', _id: '1', status: 201, result: 'created' } },
    { index: { _index: 'products', _id: 'hot', status: 429, error: { type: 'lock_wait_timeout_exception', reason: 'timed out' } } },
    { delete: { _index: 'products', _id: '3', status: 404, result: 'not_found' } },
  ],
  tags: ['a', 'b'],
  nested: { a: { b: { c: { d: 'deep' } } } },
  empty: {},
  none: [],
  'dotted.name': 1,
};

const { took: _took, ...withoutTook } = BULK_ANSWER;

const CASES: ReadonlyArray<readonly [filterPath: string, expected: JsonObject, rule: string]> = [
  // no filtering (testNoFiltering)
  ['', BULK_ANSWER, 'no filter_path value: nothing is filtered'],
  [',', BULK_ANSWER, 'only separators: nothing is filtered'],
  ['-', BULK_ANSWER, 'an empty exclusion excludes nothing'],
  ['*', BULK_ANSWER, '`*` matches every top-level field'],
  ['**', BULK_ANSWER, '`**` matches everything'],
  // inclusion (testSimpleFieldInclusive, testMultipleFieldsInclusive, testNoMatch)
  ['took', { took: 7 }, 'one field'],
  ['took,errors', { took: 7, errors: true }, 'several comma-separated filters'],
  ['  took  ', { took: 7 }, 'each filter is trimmed (FilterPath.compile)'],
  ['nothing', {}, 'no match: the root object is still written'],
  [' ', {}, 'a blank inclusion filter matches nothing'],
  // arrays are not a path level (testSimpleArrayOfObjectsPropertyInclusive, testArrays)
  ['items.*.error', { items: [{ index: { error: { type: 'lock_wait_timeout_exception', reason: 'timed out' } } }] }, 'only array elements with a match are written'],
  [
    'errors,items.*.status',
    { errors: true, items: [{ index: { status: 201 } }, { index: { status: 429 } }, { delete: { status: 404 } }] },
    'fields of several levels',
  ],
  ['items.index.status', { items: [{ index: { status: 201 } }, { index: { status: 429 } }] }, 'a named segment below an array'],
  [
    'items.*._i*',
    {
      items: [
        { index: { _index: 'products', _id: '1' } },
        { index: { _index: 'products', _id: 'hot' } },
        { delete: { _index: 'products', _id: '3' } },
      ],
    },
    'a glob inside a segment (e.f*)',
  ],
  ['tags', { tags: ['a', 'b'] }, 'an array of values as a whole (testSimpleArrayInclusive)'],
  ['tags.x', {}, 'scalars under a partial inclusion are dropped, and the emptied array with them'],
  // deeper paths and wildcards (h.i.j.k.l rows of FilterPathGeneratorFilteringTests)
  ['nested.*.b', { nested: { a: { b: { c: { d: 'deep' } } } } }, '`*` for one level'],
  ['nested.a.b.c.d,nested.a.b.c.d.e', { nested: { a: { b: { c: { d: 'deep' } } } } }, 'a shorter filter covers a longer one'],
  ['**.d', { nested: { a: { b: { c: { d: 'deep' } } } } }, '`**` for any number of levels'],
  ['**.status', { items: [{ index: { status: 201 } }, { index: { status: 429 } }, { delete: { status: 404 } }] }, '`**` through arrays (**.*2)'],
  ['**.took', {}, '`**` stands for at least one level (FilterPath.matches): a top-level field is not below it'],
  // empty containers (testEmptyObject)
  ['empty', { empty: {} }, 'an empty object included as a whole'],
  ['empty.x', {}, 'an inclusion looking inside an empty object drops it'],
  ['none', { none: [] }, 'an empty array included as a whole'],
  // dots in names (testInclusiveFiltersWithDots)
  ['dotted\\.name', { 'dotted.name': 1 }, '`\\.` matches a dot inside a field name'],
  ['dotted.name', {}, 'an unescaped dot is a path separator'],
  // exclusion (testSimpleFieldExclusive, testExclusiveFilters, testNoMatch)
  ['-took', withoutTook, 'one field excluded'],
  ['-*', {}, 'everything excluded'],
  ['-**', {}, 'everything excluded by `**`'],
  [
    '-items.*.error',
    {
      ...BULK_ANSWER,
      items: [
        { index: { _index: 'products', _id: '1', status: 201, result: 'created' } },
        { index: { _index: 'products', _id: 'hot', status: 429 } },
        { delete: { _index: 'products', _id: '3', status: 404, result: 'not_found' } },
      ],
    },
    'a field excluded in every array element',
  ],
  [
    '-**.status,-**.result,-**._index,-**._id',
    { ...BULK_ANSWER, items: [{ index: { error: { type: 'lock_wait_timeout_exception', reason: 'timed out' } } }] },
    'elements whose every field is excluded are dropped (e.f*)',
  ],
  ['-tags.x', BULK_ANSWER, 'scalars survive a partial exclusion'],
  ['-empty.x', BULK_ANSWER, 'an exclusion keeps an object that was empty already (#109668)'],
  ['-nested.a.b.c.d', (({ nested: _n, ...rest }) => rest)(BULK_ANSWER), 'an object emptied by an exclusion is dropped'],
  // both (testSingleFieldWithBothExcludesIncludes, testObjectsInArrayWithBothExcludesIncludes, testRecursiveSameObjectWithBothExcludesIncludes)
  [
    'items,-items.*.error',
    {
      items: [
        { index: { _index: 'products', _id: '1', status: 201, result: 'created' } },
        { index: { _index: 'products', _id: 'hot', status: 429 } },
        { delete: { _index: 'products', _id: '3', status: 404, result: 'not_found' } },
      ],
    },
    'inclusion first, then the exclusion on its output',
  ],
  ['items.*.error,-items.*.error.reason', { items: [{ index: { error: { type: 'lock_wait_timeout_exception' } } }] }, 'an exclusion inside an included part'],
  ['items.*.status,-items.index', { items: [{ delete: { status: 404 } }] }, 'an exclusion of a whole included branch'],
  ['took,-took', {}, 'the same field included and excluded'],
  ['nested,-nested.a.b.c.d', {}, 'an inclusion emptied by an exclusion'],
];

describe('filter_path on composed answers, as Elasticsearch filters', () => {
  it.each(CASES)('filter_path=%s', (filterPath, expected) => {
    const options = responseOptionsOf(`/_bulk?filter_path=${encodeURIComponent(filterPath)}`);
    expect(filterJson(BULK_ANSWER, options.includes, options.excludes)).toEqual(expected);
    expect(JSON.parse(renderAnswer(BULK_ANSWER, options).toString())).toEqual(expected);
  });

  it('keeps the order of the fields it writes', () => {
    const options = responseOptionsOf('/_bulk?filter_path=items.*.status,errors,took');
    expect(Object.keys(filterJson(BULK_ANSWER, options.includes, options.excludes))).toEqual(['took', 'errors', 'items']);
  });

  it('reads filter_path percent-decoded, + as a space, the last of repeated parameters', () => {
    const options = responseOptionsOf('/_bulk?filter_path=took&filter_path=items.*.err%2A%2Cerrors&pretty');
    expect(filterJson(BULK_ANSWER, options.includes, options.excludes)).toEqual({
      errors: true,
      items: [{ index: { error: { type: 'lock_wait_timeout_exception', reason: 'timed out' } } }],
    });
    const spaced = responseOptionsOf('/_bulk?filter_path=+took+,+errors');
    expect(filterJson(BULK_ANSWER, spaced.includes, spaced.excludes)).toEqual({ took: 7, errors: true });
  });

  it('a leading `-` after a space is not an exclusion: the filter is split before it is trimmed', () => {
    const options = responseOptionsOf('/_bulk?filter_path=took,%20-errors');
    expect(filterJson(BULK_ANSWER, options.includes, options.excludes)).toEqual({ took: 7 });
  });

  it('refuses a filter deeper than Elasticsearch allows', () => {
    expect(() => responseOptionsOf(`/_bulk?filter_path=${Array.from({ length: 502 }, () => 'a').join('.')}`)).toThrow(/Filter exceeds maximum depth/);
  });
});
