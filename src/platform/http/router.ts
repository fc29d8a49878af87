import express, { type Router } from 'express';

/**
 * A router whose paths match exactly as written (SPEC §1: `/API/V1/PAY/…` is not a route).
 * Every router of the API is made here, and the app itself routes case-sensitively, so that
 * routing and the authorization mounted on the same prefixes read a path the same way.
 */
export function apiRouter(): Router {
  return express.Router({ caseSensitive: true });
}
