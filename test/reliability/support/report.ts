/** Prints a test's figure as one `[reliability] …` line, the form the README quotes. */
export const figure = (line: string): void => {
  console.log(`[reliability] ${line}`)
}
