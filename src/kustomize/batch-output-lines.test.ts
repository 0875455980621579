/**
 * The label is cut by lines wherever kyaml's layout makes that certain, by
 * the syntax tree otherwise: on generated objects full of hostile text (the
 * label's own line inside block scalars and keys, comments, `---`, quotes,
 * nested `metadata:` and `labels:` maps) both give the same entry and the
 * same text, and that text is the object as printed without the label.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { BATCH_ENTRY_LABEL, unlabel, unlabelBySyntax } from './batch-output.js';

/** kyaml's layout: two-space indent, sequences not indented under their key, no folding. */
const print = (value: unknown) => stringify(value, { indent: 2, indentSeq: false, lineWidth: 0 });

const labelLine = `    ${BATCH_ENTRY_LABEL}: "3"`;
const hostileText = fc.oneof(
  fc.string(),
  fc.constantFrom(labelLine, `${labelLine}\n`, `\n${labelLine}\n  labels:\n`, 'metadata:\n  labels:\n', '# c', '---', '  labels:', 'a: b', '|', "'", '"'),
  fc.array(fc.constantFrom('x', ' ', '\n', ':', '#', labelLine, '  labels:', 'metadata:'), { maxLength: 8 }).map((parts) => parts.join('')),
);
const key = fc.oneof(fc.constantFrom('labels', 'metadata', 'name', BATCH_ENTRY_LABEL, 'spec'), hostileText);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, hostileText, fc.integer(), fc.boolean(), tie('map'), fc.array(tie('node'), { maxLength: 3 })),
  map: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
})).node;

describe('unlabel by lines', () => {
  it('agrees with the syntax tree on hostile objects, and cuts exactly the label', () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 4 }),
        fc.dictionary(key, value, { maxKeys: 3 }),
        fc.dictionary(key, hostileText, { maxKeys: 3 }),
        fc.nat(5),
        fc.nat(5),
        fc.nat(20),
        (top, metadataRest, labels, labelAt, metadataAt, entry) => {
          const otherLabels = Object.entries(labels).filter(([k]) => k !== BATCH_ENTRY_LABEL);
          const withLabel = [...otherLabels];
          withLabel.splice(Math.min(labelAt, withLabel.length), 0, [BATCH_ENTRY_LABEL, String(entry)]);
          const { metadata: _m, ...rest } = top;
          // Every object kyaml prints has a name: metadata is never left empty.
          const meta = { name: 'x', ...Object.fromEntries(Object.entries(metadataRest).filter(([k]) => k !== 'labels')) };
          // metadata anywhere among the top-level keys, labels anywhere in it: what follows them must not be taken for theirs.
          const at = <T>(entries: [string, T][], index: number, entry: [string, T]) => {
            const all = [...entries];
            all.splice(Math.min(index, all.length), 0, entry);
            return Object.fromEntries(all);
          };
          const metaEntries: [string, unknown][] = Object.entries(meta);
          const objectWith = (metadata: unknown) => at(Object.entries(rest), metadataAt, ['metadata', metadata]);
          const document = print(objectWith(at(metaEntries, labelAt, ['labels', Object.fromEntries(withLabel)])));
          const expectedMetadata = otherLabels.length > 0 ? at(metaEntries, labelAt, ['labels', Object.fromEntries(otherLabels)]) : meta;
          const bySyntax = unlabelBySyntax(document);
          assert.deepEqual(unlabel(document), bySyntax);
          assert.equal(bySyntax.entry, entry);
          assert.equal(bySyntax.text, print(objectWith(expectedMetadata)));
        },
      ),
      { numRuns: 600 },
    );
  });

  it('leaves labels with comments among them to the syntax tree', () => {
    for (const comment of ['  # kept\n', '    # kept\n', '# kept\n']) {
      for (const other of ['    app: a\n', '']) {
        const document = `kind: X\nmetadata:\n  labels:\n${labelLine}\n${comment}${other}  name: a\n`;
        assert.deepEqual(unlabel(document), unlabelBySyntax(document), comment + other);
      }
    }
  });

  it('takes no labels map but metadata’s for the label’s', () => {
    const outside = `apiVersion: v1\nkind: X\nmetadata:\n  name: a\nspec:\n  labels:\n${labelLine}\n`;
    assert.throws(() => unlabelBySyntax(outside));
    assert.throws(() => unlabel(outside), /no batch label/);
  });
});
