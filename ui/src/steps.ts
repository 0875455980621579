/** How the dashboard names the runner's seven steps (`step_name` in the API). */
export const STEP_TITLES: Readonly<Record<number, string>> = {
  1: 'Clone the repository',
  2: 'Render the infrastructure layer',
  3: 'Commit and push infrastructure',
  4: 'Wait for the Sealed Secrets controller',
  5: 'Fetch the sealing certificate',
  6: 'Render every layer, sealed',
  7: 'Commit and push everything',
};
