// The scripted model's conversations (the config's `model.scenarios`): what the "model" proposes each turn.
exports.scenarios = {
  'book-room': (vars) => [
    { proposals: [{ name: 'book_room', arguments: { room: vars.room, day: vars.day } }] },
    { final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.` },
  ],
};
