/**
 * Notes on long attribute values: kept per key, replaced when a key is noted again, and only
 * given while the value is still the text noted.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes } from '../../src/model/span-record.js';
import { extensionOf, newTextRef, noteOf, noteText } from '../../src/model/text-extensions.js';

describe('text notes', () => {
  it('keep one note per key, each key apart, the latest for a key noted again', () => {
    const attributes: Attributes = { a: 'x'.repeat(2_000), b: 'y'.repeat(2_000), c: 'z'.repeat(2_000) };
    const [ra, rb, rc, rb2] = [newTextRef(), newTextRef(), newTextRef(), newTextRef()];
    noteText(attributes, 'a', attributes.a as string, { ref: ra });
    expect(noteOf(attributes, 'b')).toBeUndefined();
    noteText(attributes, 'b', attributes.b as string, { ref: rb, extension: { earlier: ra, added: 'y]' } });
    noteText(attributes, 'c', attributes.c as string, { ref: rc });
    noteText(attributes, 'b', attributes.b as string, { ref: rb2 });
    expect(noteOf(attributes, 'a')?.ref).toBe(ra);
    expect(noteOf(attributes, 'b')?.ref).toBe(rb2);
    expect(extensionOf(attributes, 'b')).toBeUndefined();
    expect(noteOf(attributes, 'c')?.ref).toBe(rc);
    expect(noteOf(attributes, 'd')).toBeUndefined();
    expect(noteOf({ ...attributes }, 'a')).toBeUndefined();
  });

  it('give nothing once the value is another text', () => {
    const attributes: Attributes = { a: 'x'.repeat(2_000) };
    noteText(attributes, 'a', attributes.a as string, {
      ref: newTextRef(),
      extension: { earlier: newTextRef(), added: 'x' },
    });
    expect(extensionOf(attributes, 'a')?.added).toBe('x');
    attributes.a = 'w'.repeat(2_000);
    expect(noteOf(attributes, 'a')).toBeUndefined();
  });
});
