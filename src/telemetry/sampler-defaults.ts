/** The default sampler's rate, apart from the sampler (the node's config schema reads it without loading the SDK). */
import { numberRange } from "../util/range.js";

/** New traces per second the node's default sampler starts. */
export const DEFAULT_TRACES_PER_SECOND = 10;

export const TRACES_PER_SECOND_RANGE = numberRange(0);
