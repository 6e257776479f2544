export interface Props {
  /** @title Label */
  label: string;
}

/** One feature card, used nested in Features. */
export default function Feature({ label }: Props) {
  return <article data-feature={label}>{label}</article>;
}
