/**
 * Splitting a combined build's output: each object goes to the entry its
 * label names, the label (and a labels map it alone filled) is cut out and
 * nothing else, and an output the wrappers cannot have made is refused, so
 * the caller builds separately instead of guessing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BATCH_ENTRY_LABEL, rootKustomization, splitBatchOutput, wrapperKustomization } from './batch-output.js';

const labelled = (entry: number, name: string, others = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n${others}    ${BATCH_ENTRY_LABEL}: "${entry}"\n  name: ${name}\n`;

describe('splitBatchOutput', () => {
  it('gives each entry its objects in order, without the label', () => {
    const output = [labelled(1, 'a'), labelled(0, 'b', '    app: x\n'), labelled(1, 'c')].join('---\n');
    assert.deepEqual(splitBatchOutput(output, 3), [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    app: x\n  name: b\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
      '',
    ]);
  });

  it('leaves the label’s text elsewhere in an object alone', () => {
    const text = `apiVersion: v1\ndata:\n  k: |\n    ${BATCH_ENTRY_LABEL}: "1"\nkind: ConfigMap\nmetadata:\n  labels:\n    ${BATCH_ENTRY_LABEL}: "0"\n  name: a\n`;
    assert.deepEqual(splitBatchOutput(text, 2), [`apiVersion: v1\ndata:\n  k: |\n    ${BATCH_ENTRY_LABEL}: "1"\nkind: ConfigMap\nmetadata:\n  name: a\n`, '']);
  });

  it('refuses an object without the label, or of an entry not asked for', () => {
    assert.throws(() => splitBatchOutput('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n', 1));
    assert.throws(() => splitBatchOutput(labelled(2, 'a'), 2));
    assert.throws(() => splitBatchOutput(labelled(0, 'a').replace(`"0"`, `"00"`), 2));
  });

  it('writes wrappers that name their directory as a string and label metadata only', () => {
    assert.equal(
      wrapperKustomization(3, '../repo/1: x'),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: ["../repo/1: x"]\nlabels:\n- pairs: {"${BATCH_ENTRY_LABEL}": "3"}\n  includeSelectors: false\n  includeTemplates: false\n`,
    );
    assert.match(rootKustomization(2), /resources:\n- w0\n- w1\n$/);
  });
});
