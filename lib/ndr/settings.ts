/**
 * Settings of the `ndr` service (issue 9; docs/decisions/0038-ndr-cases.md),
 * read from the environment when the service is created (tests shorten them).
 * All durations in milliseconds.
 *
 * | Variable | Meaning | Default |
 * |---|---|---|
 * | `NDR_ACTION_DEADLINE_MS` | how long the merchant has to act on a failed attempt (from its scan time) before a re-attempt is requested on their behalf | 86400000 (24 h) |
 * | `NDR_POLICY_MS` | period of the policy pass (automatic re-attempts, RTO, pending notifications) | 60000 |
 * | `NDR_POLICY_RETRY_MS` | after an automatic re-attempt the courier refused or could not take, when the next pass tries again | 3600000 |
 * | `NDR_MAX_ATTEMPTS` | failed delivery attempts after which the shipment goes RTO | 3 |
 * | `NDR_CALL_TIMEOUT_MS` | timeout of calls to other services | 5000 |
 * | `NDR_ACT_POLL_MS` | first poll of a sent act's outcome at a courier that decides later (Delhivery), then doubled per poll (at most 1 h apart, for 24 h) | 60000 |
 */
import { settingsOf } from "../platform/config";

/** The ndr service's timings and limits. */
export interface NdrSettings {
	deadlineMs: number;
	policyMs: number;
	policyRetryMs: number;
	maxAttempts: number;
	callTimeoutMs: number;
	/** delay of the first poll of a sent act's outcome (./act-status.ts) */
	actPollMs: number;
	/** cases one policy pass takes (leases) at most */
	batch: number;
	/** how long a pass holds its lease on a case (another pod's pass skips it meanwhile) */
	leaseMs: number;
}

/**
 * Reads {@link NdrSettings} from `env` (process.env unless given; declared in lib/platform/config.ts).
 * @throws Error naming the variable when a value is not allowed
 */
export function ndrSettings(env: NodeJS.ProcessEnv = process.env): NdrSettings {
	return {
		...settingsOf(
			{
				deadlineMs: "NDR_ACTION_DEADLINE_MS",
				policyMs: "NDR_POLICY_MS",
				policyRetryMs: "NDR_POLICY_RETRY_MS",
				maxAttempts: "NDR_MAX_ATTEMPTS",
				callTimeoutMs: "NDR_CALL_TIMEOUT_MS",
				actPollMs: "NDR_ACT_POLL_MS",
			},
			env,
		),
		batch: 50,
		leaseMs: 120_000,
	};
}
