/** Style sheets imported for their side effect: the bundler emits them as the page's CSS. */
declare module '*.css';
