// @ts-check
// The scripted model's conversations (the config's `model.scenarios`): what the "model" proposes each turn.
/** @typedef {{ toolName: string, state: string }} Observation */

exports.scenarios = {
  /** @param {Record<string, unknown>} vars */
  'book-room': (vars) => [
    { proposals: [{ name: 'book_room', arguments: { room: vars.room, day: vars.day } }] },
    {
      final: (/** @type {Observation[]} */ obs) =>
        `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.`,
    },
  ],
};
