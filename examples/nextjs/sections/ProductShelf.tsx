export interface Product {
  name: string;
  price: number;
}

export interface Props {
  title: string;
  /** Filled by a loader in content (site/loaders/products.ts). */
  products?: Product[] | null;
}

export default function ProductShelf({ title, products }: Props) {
  return (
    <section data-section="shelf">
      <h2>{title}</h2>
      <ul>
        {(products ?? []).map((p) => (
          <li key={p.name}>
            {p.name}: ${p.price}
          </li>
        ))}
      </ul>
    </section>
  );
}
