export interface Props {
  text: string;
}

/** A layout section: the same on every page. */
export const layout = true;

export default function Footer({ text }: Props) {
  return (
    <footer data-section="footer">
      <small>{text}</small>
    </footer>
  );
}
