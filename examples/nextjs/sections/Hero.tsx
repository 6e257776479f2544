export interface Props {
  /** @title Title */
  title: string;
  /**
   * Shown under the title.
   * @title Tagline
   */
  subtitle?: string;
  /** Where the title sits. */
  align?: "left" | "center" | "right";
}

export default function Hero({ title, subtitle, align = "left" }: Props) {
  return (
    <section data-section="hero" style={{ textAlign: align }}>
      <h1>{title}</h1>
      {subtitle ? <p>{subtitle}</p> : null}
    </section>
  );
}
