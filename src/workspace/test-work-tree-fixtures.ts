/**
 * Test support for verifying generated work trees: one cluster of the default
 * platform, two of matrix-example (Talos on Proxmox, EKS on AWS), and the part
 * of a report a user reads.
 */
import type { WorkTreeReport } from './verify-work-tree.js';

export const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
export const TALOS = {
  name: 'tooling-proxmox',
  domain: 'tooling-proxmox.example.net',
  region: 'fra-dc2',
  role: 'tooling',
  infra_provider: 'proxmox',
  dns_provider: 'digitalocean',
};
export const EKS = {
  name: 'tooling-aws',
  domain: 'tooling-aws.example.net',
  region: 'eu-west-1',
  role: 'tooling',
  infra_provider: 'aws',
  dns_provider: 'route53',
};

/** The verdict part of a report: what a user sees. */
export function verdict(report: WorkTreeReport): Omit<WorkTreeReport, 'kustomizeBuilds'> {
  const { findings, notes, kustomizationsChecked, summary } = report;
  return { findings, notes, kustomizationsChecked, summary };
}
