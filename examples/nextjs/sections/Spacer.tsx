export interface Props {
  /** Height in pixels. */
  height: number;
}

/** Empty space, so later sections start below the fold. */
export default function Spacer({ height }: Props) {
  return <div data-section="spacer" style={{ height }} />;
}
