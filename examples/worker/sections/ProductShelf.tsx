import type { Product } from "../loaders/products";

export interface Props {
  /** @title Title */
  title: string;
  /** The products shown (a loader in content). */
  products?: Product[];
}

export default function ProductShelf({ title, products = [] }: Props) {
  return (
    <section data-section="shelf">
      <h2>{title}</h2>
      <ul>
        {products.map((p) => (
          <li key={p.id}>
            {p.name}: {p.price}
          </li>
        ))}
      </ul>
    </section>
  );
}
