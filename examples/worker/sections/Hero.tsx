export interface Props {
  /** @title Title */
  title: string;
  /** Shown under the title. */
  subtitle?: string;
}

export default function Hero({ title, subtitle }: Props) {
  return (
    <section data-section="hero">
      <h1>{title}</h1>
      {subtitle ? <p>{subtitle}</p> : null}
    </section>
  );
}
