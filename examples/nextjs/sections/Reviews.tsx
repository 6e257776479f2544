export interface Props {
  title: string;
  reviews: string[];
}

/** Shown in place of the section until it nears the viewport (when the content defers it). */
export function LoadingFallback({ title }: Props) {
  return <p data-testid="reviews-loading">Loading {title}…</p>;
}

export default function Reviews({ title, reviews }: Props) {
  return (
    <section data-section="reviews">
      <h2>{title}</h2>
      <ul>
        {reviews.map((review) => (
          <li key={review}>{review}</li>
        ))}
      </ul>
    </section>
  );
}
