import { BadRequestException, Body, Controller, Get, Post } from '@nestjs/common';
import { randomUUID } from 'node:crypto';

/** A note of the example's own API. */
export interface Note {
  id: string;
  text: string;
}

/**
 * The app's own JSON API: `@Body()` is the object Nest's JSON body parser made, which the webhook
 * route leaves on for every other route.
 */
@Controller('notes')
export class NotesController {
  readonly #notes: Note[] = [];

  /** `GET /notes`. */
  @Get()
  list(): { notes: Note[] } {
    return { notes: this.#notes };
  }

  /** `POST /notes` with `{"text": "..."}`: 201 and the note, or 400. */
  @Post()
  create(@Body() body: unknown): Note {
    const text = (body as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string' || text === '') throw new BadRequestException('text is required');
    const note = { id: randomUUID(), text };
    this.#notes.push(note);
    return note;
  }
}
