"use client";

import { useState } from "react";

export interface Props {
  label: string;
  start?: number;
}

/** A client component: interactive after hydration. */
export default function Counter({ label, start = 0 }: Props) {
  const [count, setCount] = useState(start);
  return (
    <section data-section="counter">
      <button type="button" onClick={() => setCount((c) => c + 1)}>
        {label}
      </button>
      <output data-testid="count">{count}</output>
    </section>
  );
}
