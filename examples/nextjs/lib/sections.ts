// The section registry: module key (./sections/<path>.tsx) → the module.
export const sections = {
  "./sections/Hero.tsx": () => import("../sections/Hero"),
  "./sections/ProductShelf.tsx": () => import("../sections/ProductShelf"),
  "./sections/Counter.tsx": () => import("../sections/Counter"),
  "./sections/Footer.tsx": () => import("../sections/Footer"),
  "./sections/Features.tsx": () => import("../sections/Features"),
  "./sections/Feature.tsx": () => import("../sections/Feature"),
  "./sections/Greeting.tsx": () => import("../sections/Greeting"),
  "./sections/Spacer.tsx": () => import("../sections/Spacer"),
  "./sections/Reviews.tsx": () => import("../sections/Reviews"),
};
