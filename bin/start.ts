/**
 * `npm start`: starts this process's services (all of them by default) with the
 * runtime configuration of docs/ARCHITECTURE.md §2; stops gracefully on
 * SIGTERM/SIGINT.
 */
import { startSystem } from "../lib/platform/system";

async function main(): Promise<void> {
	const system = await startSystem();
	let stopping = false;
	const stop = async (signal: string) => {
		if (stopping) return;
		stopping = true;
		system.broker.logger.info(`${signal} received, stopping`);
		try {
			await system.stop();
			process.exit(0);
		} catch (err) {
			console.error(err);
			process.exit(1);
		}
	};
	process.on("SIGTERM", () => void stop("SIGTERM"));
	process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err) => {
	console.error(`start failed: ${(err as Error).message}`);
	process.exit(1);
});
