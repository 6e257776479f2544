import type { ComponentType } from "react";

/** A nested section: the editor picks a section, the page hands it over as a component. */
export interface Section {
  Component: ComponentType<Record<string, unknown>>;
  props: Record<string, unknown>;
}

export interface Props {
  title: string;
  /** Sections shown side by side. */
  items: Section[];
}

export default function Features({ title, items }: Props) {
  return (
    <section data-section="features">
      <h2>{title}</h2>
      <div>
        {items.map(({ Component, props }, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a nested section has no id; its place in the editor's list is its identity
          <Component key={i} {...props} />
        ))}
      </div>
    </section>
  );
}
