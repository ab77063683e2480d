/** Runs this script again with each argument list at once, as OS processes. */
import { spawn } from "node:child_process";

/** What each process printed, in order; rejects when one fails. */
export function runProcesses(script: string, argumentLists: string[][]): Promise<string[]> {
  return Promise.all(
    argumentLists.map(
      (args) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
          let out = "";
          child.stdout.on("data", (chunk) => (out += chunk));
          child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(" ")} exited ${code}`))));
        }),
    ),
  );
}
