/**
 * A verification finding: one defect, one line. The CLI prints them as they
 * are and exits 1 (DESIGN.md, `verify` contract), so the line must name where
 * to look and what is wrong without context.
 */

/** One defect in the tree. */
export interface Finding {
  /** Repository-relative file or directory the defect is in, when known. */
  readonly file?: string;
  /** The object, `Kind namespace/name`, when the defect belongs to one. */
  readonly object?: string;
  readonly message: string;
}

/**
 * One line: `clusters/x/flux/apps.yaml: Kustomization flux-system/apps: dependsOn flux-system/infra does not exist`.
 */
export function formatFinding(finding: Finding): string {
  return [finding.file, finding.object, finding.message].filter((part) => part !== undefined && part !== '').join(': ');
}
