"use server";
// The Server Action loading one deferred section of a page (null when the page defers no such
// section).
import type { DeferredSectionRef } from "sitefile/deferred";
import { page } from "./page";

export async function loadDeferredSection(ref: DeferredSectionRef) {
  return page.section(ref);
}
