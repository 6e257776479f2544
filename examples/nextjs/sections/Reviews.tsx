export interface Props {
  title: string;
  reviews: string[];
  /** Set by the section loader: the path the section was loaded for. */
  loadedFor?: string;
}

/** Shown in place of the section until it nears the viewport (when the content defers it). */
export function LoadingFallback({ title }: Props) {
  return <p data-testid="reviews-loading">Loading {title}…</p>;
}

/** The section loader: runs when the section is rendered — for a deferred section, when the
 * browser loads it, not in the page's first response. */
export async function loader(props: Props, request: { url: string }): Promise<Props> {
  return { ...props, loadedFor: new URL(request.url).pathname };
}

export default function Reviews({ title, reviews, loadedFor }: Props) {
  return (
    <section data-section="reviews">
      <h2>{title}</h2>
      <ul>
        {reviews.map((review) => (
          <li key={review}>{review}</li>
        ))}
      </ul>
      <p data-testid="reviews-loader">Loaded for {loadedFor ?? "(no loader ran)"}</p>
    </section>
  );
}
