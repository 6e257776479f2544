export interface Product {
  id: string;
  name: string;
  price: string;
}

export interface Props {
  /** How many products. */
  count?: number;
}

/** The shop's products (a real site fetches them from its commerce API here). */
export default function products({ count = 3 }: Props): Product[] {
  return Array.from({ length: count }, (_, i) => ({ id: `p${i + 1}`, name: `Product ${i + 1}`, price: `$${(i + 1) * 10}` }));
}
