/**
 * What the estimator's `estimatedFootprintInBytes` counts besides the elements of its typed arrays, as V8
 * (Node 24) lays them out in its heap snapshots: a typed array's view object, the ArrayBuffer object of
 * a buffer of its own (arrays carved from one buffer share it), and each class's own object with the
 * numbers it boxes. The counts follow the objects as built; `npm run bench -- estimate` prints the
 * measured heap beside them.
 */

/** A typed array's view object. */
export const VIEW_BYTES = 104;
/** An ArrayBuffer object (its elements counted apart). */
export const BUFFER_BYTES = 96;

/** Heap bytes of typed arrays: `elements` bytes in `views` views over `buffers` buffers. */
export function arrayBytes(elements: number, views: number, buffers: number): number {
  return elements + views * VIEW_BYTES + buffers * BUFFER_BYTES;
}
