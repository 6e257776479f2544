"use client";
// The deferred-section client component: the section's loading fallback until it nears the
// viewport, then the section the Server Action renders (its client components hydrated).
import * as React from "react";
import { deferredSectionComponent } from "sitefile/deferred";
import { loadDeferredSection } from "./deferred-action";

export const DeferredSection = deferredSectionComponent(React, loadDeferredSection);
