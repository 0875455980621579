/**
 * Packages a Helm chart and pushes it to an OCI registry, as `helm package` +
 * `helm push` do, where no helm binary is at hand:
 *
 *   OCI_USERNAME=… OCI_PASSWORD=… npm run publish:chart -- --chart charts/gitops-scaffolder --to oci://ghcr.io/kubeopera/charts
 *
 * prints the pushed reference and digest. Registry credentials come from the
 * environment only (the process list shows flags).
 */
import { parseArgs } from 'node:util';
import { publishHelmChart } from '../src/oci/publish-helm-chart.js';

const { values } = parseArgs({ options: { chart: { type: 'string' }, to: { type: 'string' }, insecure: { type: 'boolean', default: false } } });
if (values.chart === undefined || values.to === undefined) {
  process.stderr.write('usage: publish-chart --chart DIR --to oci://REGISTRY/REPOSITORY [--insecure]\n');
  process.exit(2);
}
const { OCI_USERNAME: username, OCI_PASSWORD: password } = process.env;
if ((username === undefined) !== (password === undefined)) {
  process.stderr.write('publish-chart: set both OCI_USERNAME and OCI_PASSWORD, or neither\n');
  process.exit(2);
}
try {
  const pushed = await publishHelmChart({
    chartDir: values.chart,
    to: values.to,
    ...(values.insecure ? { insecure: true } : {}),
    ...(username !== undefined && password !== undefined ? { credentials: { username, password } } : {}),
  });
  process.stderr.write(`pushed ${pushed.files} files as oci://${pushed.repository}:${pushed.tag}\n`);
  process.stdout.write(`${pushed.digest}\n`);
} catch (error) {
  process.stderr.write(`publish-chart: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
