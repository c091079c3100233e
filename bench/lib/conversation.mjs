// The messages of a held stream's request: one short line, or an agent's conversation of about `kb` KB in 20 turns
// of text that varies (as prompts do, so nothing in the gateway can share or intern it).
export function conversation(kb) {
  if (!kb) return [{ role: 'user', content: 'Work on this for a while.' }];
  const turnChars = Math.round((kb * 1024) / 20);
  const turn = (i) => {
    let text = '';
    for (let j = 0; text.length < turnChars; j++)
      text += `line ${j} of turn ${i}: ${(i * 7919 + j * 104729).toString(36)}. `;
    return text.slice(0, turnChars);
  };
  return Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: turn(i) }));
}
